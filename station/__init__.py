"""The station: `mjtable station`, the page served at the table, its own process and unit.

It is a client of the service's local API socket alone (controller.api.client, followed by
controller.api.watcher): no broker, so a table without the floor's MQTT has its page too. It
imports the API client, its watcher and the message models they speak, and the project's I/O
loop, never the controller's internals (tests/station/test_boundary.py checks it). One job
per module:

- settings.py: what the station needs from the configuration's [station] section;
- view.py: the latest status, the fault history and the picture, kept for the page;
- picture.py: the table from above as SVG, from the last dealt state (the view keeps it, the
  page draws it);
- web/: the page itself (aiohttp and jinja2), a reader of view.py (docs/web.md);
- service.py: the station wired together: the API watcher on its I/O loop feeding the view,
  the page's server beside it, run until SIGTERM.

See docs/web.md.
"""
