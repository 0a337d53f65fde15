"""The page served at the table by `mjtable station` ([station] section).

A reader of the station's view (station/view.py), in a thread of its own (aiohttp's asyncio
loop); see docs/web.md. One job per module:

- auth.py: tokens, sessions, CSRF tokens and the failed-login limiter (no I/O, time given);
- page.py: what the page shows and its templates (templates/, static/);
- diag.py: the technician's checks;
- server.py: the routes (aiohttp) and the thread that serves them.
"""
