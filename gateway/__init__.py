"""The floor gateway: `mjtable gateway`, its own process beside the table's service.

It is a client of the service's local API socket (controller.api.client) and publishes the
table to the floor's MQTT broker; the service itself never touches the network. It imports
only the API client and the message models that client speaks, and the project's I/O loop,
never the controller's internals (tests/gateway/test_boundary.py checks it). One job per module:

- settings.py: what the gateway needs from the configuration's [gateway] section;
- payloads.py: the topics and the JSON payloads published there, and their schemas;
- discovery.py: Home Assistant's MQTT discovery configurations;
- outbox.py: the bounded on-disk outbox that keeps events while the broker is away;
- broker.py: one connection to the broker (paho-mqtt, on the gateway's loop), fed by an
  outbox;
- core.py: the connection to the table's API socket (subscribe, events, status, reconnect),
  on the gateway's loop;
- view.py: the latest status, the fault history and the picture, kept for readers in the
  process;
- picture.py: the table from above as SVG, from the last dealt state (the view keeps it, the
  page draws it);
- web/: the technicians' page (with [gateway.web]), a reader of view.py (docs/web.md);
- metrics.py: the Prometheus endpoint;
- service.py: the gateway wired together around its one I/O loop (drivers/ioloop.py), run
  until SIGTERM; the threads beside the loop are in docs/floor.md, "Threads";
- backoff.py: the reconnection delays;
- mosquitto.py and floorsim.py: a local broker and a floor of simulated tables, for
  `mjtable floor-sim`, the tests and bench/floor.py.

See docs/floor.md.
"""
