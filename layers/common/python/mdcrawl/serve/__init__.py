"""`mdcrawl serve`: the REST + WebSocket API of docs/api.md on one local port and a web page
(the client commands, `mdcrawl submit` and `mdcrawl watch`, are in ``mdcrawl.client``).

The API logic is ``mdcrawl.service`` (the same code the Lambda handlers call); this
package only adapts a socket to it and runs the crawls on the local runtime:

    server.py        composition: stores, runner, hub, the app, uvicorn; the caps
    app.py           the Starlette app: page, downloads, REST (service.rest, in worker
                     threads), WebSocket, /mcp
    keys.py          the API key: who is asking
    hub.py           WebSocket connections, the Pusher, live fan-out of new events
    runner.py        one asyncio task per job: orchestrate, process, finalize; resume
    downloads.py     signed (itsdangerous), expiring download links for result blobs
    cli_commands.py  argparse wiring of serve
"""
