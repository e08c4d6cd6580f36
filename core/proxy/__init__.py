"""Record any agent's model calls by standing between it and its provider (issue 16 part 3).

``server.py`` (``ProxyServer``, ``ProxyStatus``) accepts the agent's HTTP requests and
forwards them upstream with httpx, ``recording.py`` writes each request (before forwarding)
and its outcome (after) to the store, ``grouping.py`` decides which trace a call belongs
to, ``messages.py`` turns a request body into messages, ``assemble.py`` and ``tap.py`` a
streamed or plain response into one, and ``query.py`` reads a recorded request back.
"""
