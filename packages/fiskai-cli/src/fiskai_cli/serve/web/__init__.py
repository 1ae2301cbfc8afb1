"""The web channel of `fiskai serve` (`expose.agent.web`, reference 8.2).

The Vercel AI SDK UI message stream, AG-UI, the card, the session API and the chat page, behind the
Origin and Host rules. `channel.WebChannel` is the channel (it needs the `web` extra: starlette and
uvicorn); `_listen` binds its socket. The page is `static/index.html` (served at `base_path`), one file
with its script, no build step.
"""
