"""The technicians' page, served by the floor gateway with a [gateway.web] section.

A reader of the gateway's view (gateway/view.py), in a thread of its own (aiohttp's asyncio
loop); see docs/web.md.
This package's __init__ imports nothing: the gateway imports the web library only when the
page is configured (server.py). One job per module:

- auth.py: tokens, sessions, CSRF tokens and the failed-login limiter (no I/O, time given);
- page.py: what the page shows and its templates (templates/, static/);
- diag.py: the technician's checks;
- server.py: the routes (aiohttp) and the thread that serves them.
"""
