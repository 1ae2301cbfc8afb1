"""Building the jobs channel at start-up: its NATS connection, and the storage check that refuses to start.

A worker provisions nothing: a missing task store or queue fails the process before the banner, naming the
`ajc` command that creates it (a restart-on-failure supervisor would otherwise crash-loop on the first job).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import click

from fiskai_cli import _wiring as wiring

if TYPE_CHECKING:
    from fiskai_a2a.nats_transport import NatsTransport

    from .jobs import JobsChannel
    from .startup import Flags

__all__ = ["jobs_channel"]


async def jobs_channel(
    stack: AsyncExitStack, harness: wiring.Harness, transport: NatsTransport, jobs: Any, flags: Flags
) -> JobsChannel:
    """The channel over the queue's connection: the harness's, or its own when `jobs.nats_context` names another.

    Raises:
        click.ClickException: the queue's storage is missing (naming the `ajc` command), or its server is unreachable.
    """
    from fiskai_a2a.jobs.store import JobStorageError, TaskStore
    from fiskai_cli._nats import NatsTarget, nats_target, open_nats

    from ._job_journal import StoreJournals
    from .jobs import JobsChannel

    config = harness.config
    queue_transport = transport
    if jobs.nats_context and not flags.target.given and jobs.nats_context != config.nats_context:
        # The queue may live on another cluster than the session store: dialled separately.
        context = nats_target(NatsTarget(context_name=jobs.nats_context), config, needed_for="expose.agent.jobs")
        queue_transport = await stack.enter_async_context(open_nats(context, name=f"fiskai {config.identity} jobs"))
    store = TaskStore(queue_transport.client)
    try:
        await store.check_task_store()
        limits = await store.queue_limits(jobs.queue)
    except JobStorageError as err:
        raise click.ClickException(
            f'building the jobs endpoint: connecting to queue "{jobs.queue}": storage not ready: {err}'
        ) from None
    assert harness.journal is not None, "serve opens the journal store for channel runs"
    return JobsChannel(
        queue_transport.client,
        limits=limits,
        identity=config.identity,
        task_type=jobs.task_type,
        workers=flags.workers or jobs.workers,
        max_payload=jobs.max_payload,
        journals=StoreJournals(harness.journal),
        context=queue_transport.context.describe(),
    )
