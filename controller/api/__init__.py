"""The local API: newline-delimited JSON over Unix sockets, one socket per role.

    messages.py    requests, responses and event lines (pydantic), and their JSON schemas
                   (``python -m controller.api --write docs/api``)
    server.py      ApiServer on the service's I/O loop, composed of its doors (the two
                   listening sockets: socketfile, admission with the reserve kept for status
                   and stop), connection, decoding (strict JSON, jsonshape), roles, dispatch
                   and fanout, in files of their own
    client.py      ApiClient, the Python client the command line and the gateway use

See docs/api.md.
"""
