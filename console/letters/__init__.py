"""What a letter is, apart from any broker and from Django: its failure envelope, the
frameworks' failure headers read into it (``frameworks``), broker values as JSON (``values``),
bodies decoded (``compression``, ``bounded_json``), the columns a received message becomes in
custody (``rows``), the tables an adapter declares for its page (``tables``), and what a broker
says happens to a message that keeps failing (``policy``). The adapters (console.brokers) use
it; so do custody, the pages and the API.
"""
