"""The client of the mdcrawl API (docs/api.md), for any deployment: `mdcrawl serve` on one
machine or the AWS stack.

    api.py           the HTTP/WebSocket client behind `submit` and `watch`
    cli_commands.py  argparse wiring of submit and watch
"""
