"""Fetch a pre-signed S3 URL as a client would: an HTTP GET of exactly that URL.

Under ``mock_aws`` moto answers HTTP requests made with ``requests`` in-process (it
patches the transport through ``responses``): the URL's path, query string (the
signature fields) and host reach moto's S3 front end as they would reach S3, with no
socket and no internet. (moto's server mode would need Flask, which moto[server] pulls
in and this project does not install.) moto does not verify signatures, so this proves
that the URL names the right object and serves it, not that the signature is valid.
"""

from __future__ import annotations

import requests


def fetch_presigned(url: str) -> bytes:
    answer = requests.get(url, timeout=30)
    answer.raise_for_status()
    return answer.content
