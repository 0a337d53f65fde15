"""Home Assistant's MQTT discovery: one retained configuration per entity of the table.

Four entities, all read from the retained ``status`` topic and made unavailable by the
``availability`` topic: the table's state (sensor), a fault (binary sensor, class problem,
with the fault's code and words as attributes), the cycles dealt (sensor, total increasing)
and the board's link (binary sensor, class connectivity). Each configuration goes to
``<discovery prefix>/<component>/mjtable_<table>/<object>/config``.
"""

from __future__ import annotations

from gateway.payloads import DiscoveryConfig, DiscoveryDevice, Topics


def discovery_configs(
    discovery_prefix: str, topics: Topics, table_name: str
) -> dict[str, DiscoveryConfig]:
    """The configurations by topic."""
    node = f"mjtable_{topics.table}"
    device = DiscoveryDevice(
        identifiers=[node],
        name=table_name,
        manufacturer="mjtable",
        model="automatic mahjong table",
    )

    def entity(name: str, obj: str, template: str, **extra: str) -> DiscoveryConfig:
        return DiscoveryConfig(
            name=name,
            unique_id=f"{node}_{obj}",
            object_id=f"{node}_{obj}",
            state_topic=topics.status,
            value_template=template,
            availability_topic=topics.availability,
            device=device,
            **extra,  # type: ignore[arg-type]  # the optional string keys
        )

    on_off = {"payload_on": "ON", "payload_off": "OFF"}
    entities = {
        ("sensor", "state"): entity(
            "State", "state", "{{ value_json.state }}", icon="mdi:table-furniture"
        ),
        ("binary_sensor", "fault"): entity(
            "Fault",
            "fault",
            "{{ 'ON' if value_json.fault else 'OFF' }}",
            device_class="problem",
            json_attributes_topic=topics.status,
            json_attributes_template="{{ (value_json.fault or {}) | tojson }}",
            **on_off,
        ),
        ("sensor", "cycles"): entity(
            "Cycles dealt",
            "cycles",
            "{{ value_json.cycles_dealt }}",
            state_class="total_increasing",
            icon="mdi:counter",
        ),
        ("binary_sensor", "link"): entity(
            "Board link",
            "link",
            "{{ 'ON' if value_json.link_up else 'OFF' }}",
            device_class="connectivity",
            **on_off,
        ),
        ("binary_sensor", "panel"): entity(
            "Button panel",
            "panel",
            "{{ 'ON' if value_json.panel and value_json.panel.connected else 'OFF' }}",
            device_class="connectivity",
            **on_off,
        ),
    }
    return {
        f"{discovery_prefix}/{component}/{node}/{obj}/config": config
        for (component, obj), config in entities.items()
    }
