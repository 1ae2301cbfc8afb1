# syntax=docker/dockerfile:1
# An MCP-only fiskai image: `fiskai-cli[mcp]` (fiskai-core, fiskai-mcp, click, mcp) and nothing else;
# no anthropic, nats-py, apsw or sqlite-vec. Build it, then add your fisk application and agent.yaml:
#
#   docker build -t fiskai-mcp .
#   FROM fiskai-mcp                             # in your own Dockerfile
#   COPY --chown=fiskai myapp agent.yaml /work/
#
# Run with a bearer token (required for the non-loopback bind a container needs) and the host name
# clients use (Host/Origin checks):
#
#   docker run -p 8080:8080 -e FISKAI_MCP_TOKEN="$(openssl rand -hex 32)" my-image \
#     -c /work/agent.yaml mcp --address 0.0.0.0 --token-env FISKAI_MCP_TOKEN --allow-host mcp.internal

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /bin/uv
# Bytecode compiled once here, so `fiskai mcp` starts without compiling (see stack-notes, start-up cost).
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/fiskai
WORKDIR /src

# Dependency layer: only the lock and the workspace manifests, so code edits do not reinstall mcp.
COPY uv.lock pyproject.toml ./
COPY packages/fiskai-core/pyproject.toml packages/fiskai-core/
COPY packages/fiskai-runstate/pyproject.toml packages/fiskai-runstate/
COPY packages/fiskai-memory/pyproject.toml packages/fiskai-memory/
COPY packages/fiskai-rag/pyproject.toml packages/fiskai-rag/
COPY packages/fiskai-agent/pyproject.toml packages/fiskai-agent/
COPY packages/fiskai-mcp/pyproject.toml packages/fiskai-mcp/
COPY packages/fiskai-a2a/pyproject.toml packages/fiskai-a2a/
COPY packages/fiskai-cli/pyproject.toml packages/fiskai-cli/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-install-workspace --package fiskai-cli --extra mcp

# The workspace members themselves, installed as wheels (no editable links back into /src).
COPY packages packages
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package fiskai-cli --extra mcp

FROM ${PYTHON_IMAGE}
COPY --from=build /opt/fiskai /opt/fiskai
ENV PATH=/opt/fiskai/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1
RUN useradd --system --uid 10001 --home-dir /work --create-home fiskai
USER fiskai
WORKDIR /work
EXPOSE 8080
ENTRYPOINT ["fiskai"]
CMD ["-c", "/work/agent.yaml", "mcp", "--address", "0.0.0.0", "--token-env", "FISKAI_MCP_TOKEN"]
