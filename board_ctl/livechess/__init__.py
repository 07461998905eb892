"""A LiveChess-compatible endpoint (`board-ctl run --livechess`): lichess.org/dgt and
chess.com's e-board support talk to DGT LiveChess over a WebSocket on port 1982; this
package answers them for our board, from the service's states, in a thread of its own.

`address` (where to listen) is light and read by the config check; `endpoint` (the
server, with the `websockets` library) is imported only when the endpoint runs."""
