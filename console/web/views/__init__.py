"""The console's pages. Each view validates its input and calls one service function."""
