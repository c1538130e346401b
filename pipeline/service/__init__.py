"""`jobdedup serve`: an HTTP service over one index file (FastAPI on uvicorn).

Endpoints (JSON in and out; `/openapi.json` describes them, no documentation page is served, so
nothing is ever loaded from the internet):

- `POST /v1/check` — one ad (an object) or a list of ads (contract columns): for each, its
  duplicates among the indexed ads and the other ads of the request, the group it would join and the
  decision. Nothing is written. `Index.check` underneath: the very matching of `index add`.
- `POST /v1/ads` — add a batch exactly as `jobdedup index add` does (one transaction); returns every
  ad's group and the merges.
- `GET /v1/ads/{ad_id}`, `GET /v1/groups/{group_id}`, `DELETE /v1/ads/{ad_id}`, `GET /v1/stats`,
  `GET /healthz`.

The parts, one job each:

- `command` — the `jobdedup serve` parser, the token file and bind checks, and the run
  (`cmd_serve`; `worker_app` for each `--workers` process).
- `app` — the FastAPI application and its routes (`create_app`).
- `guard` — around every request: the bearer token, a declared body too large, a failure answered
  500, one log line per request and per slow check.
- `validation` — a request body's ads checked (`parse_ads`), or `BadInput` naming field and fix.
- `answers` — the JSON answers: a check's decisions and duplicates, an ad's or a group's members.
- `state` — `Service`: the index, model, read connections and writer of one service process.
- `readers` — the read connections, pinned to the last state whose view is built, kept current.
- `writer` — the writes in a child process (`WriterProcess`), shared by the workers through
  `WriterBroker` and `RemoteWriter`.
- `workers` — `--workers N`: uvicorn's supervisor over N service processes on one socket.

Design: checks run on a small pool of read connections sharing one `KeyCache` (the index's band and
field keys decoded once into memory-mapped files beside the index, so a check looks up its ~45 keys
with `searchsorted` and reads only the candidate rows from SQLite; `--workers N` processes share
them, `workers`). Writes run one at a time in a child process at a lower CPU priority (`writer`),
so an add never holds the checks' GIL; the cache follows every committed write, the child's and
other processes' (`meta.generation`). A CLI `index add` on the same file is serialised with the
child's writes by SQLite's write lock (waiting up to `--wait` seconds), and checks never wait for
either: they read the last committed state whose view the service has built (`readers`), and a
write is answered once every worker's readers follow it.

Security: binds 127.0.0.1 unless `--host` says otherwise. With `--token-file`, every request but
`/healthz` needs `Authorization: Bearer <token>`; listening beyond loopback without a token file,
the write endpoints refuse (403). Logs carry method, path, status, ad counts and times, never ad
text (uvicorn's access log is off; request bodies and error details are not logged).

The package imports none of its modules: uvicorn's supervisor (`workers`) loads no pandas.

Example:
    jobdedup serve --index ads.jdx --port 8000 --token-file token.txt
    curl -s -X POST localhost:8000/v1/check -H "Authorization: Bearer $(cat token.txt)" \\
         -H 'Content-Type: application/json' -d '{"ad_id": "a1", "description": "..."}'
"""
