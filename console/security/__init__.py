"""Sign-in rate limiting (signin.py) and the Content Security Policy header (headers.py)."""
