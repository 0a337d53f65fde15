"""The floor gateway: `mjtable gateway`, its own process beside the table's service.

It is a client of the service's local API socket (controller.api.client, followed by
controller.api.watcher) and publishes the table to the floor's MQTT broker; the service itself
never touches the network. It imports only the API client, its watcher and the message models
they speak, and the project's I/O loop, never the controller's internals
(tests/gateway/test_boundary.py checks it). One job per module:

- settings.py: what the gateway needs from the configuration's [gateway] section;
- payloads.py: the topics and the JSON payloads published there, and their schemas;
- discovery.py: Home Assistant's MQTT discovery configurations;
- outbox.py: the bounded on-disk outbox that keeps events while the broker is away;
- broker.py: one connection to the broker (paho-mqtt, on the gateway's loop), fed by an
  outbox;
- metrics.py: the Prometheus endpoint;
- service.py: the gateway wired together around its one I/O loop (drivers/ioloop.py), run
  until SIGTERM; the threads beside the loop are in docs/floor.md, "Threads";
- mosquitto.py and floorsim.py: a local broker and a floor of simulated tables, for
  `mjtable floor-sim`, the tests and bench/floor.py.

The page at the table is another process's: station/ (`mjtable station`). See docs/floor.md.
"""
