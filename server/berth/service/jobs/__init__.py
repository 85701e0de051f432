"""Jobs in the engine: their records, their life and what they wait for.

Owns the job records (:mod:`~berth.service.jobs.book`), the memory of finished jobs
(:mod:`~berth.service.jobs.memory`), the steps of a job's life from admission to its
end (:mod:`~berth.service.jobs.lifecycle`), the dependencies between jobs and their
settling (:mod:`~berth.service.jobs.dependencies`, :mod:`~berth.service.jobs.settling`),
the gang slot boundaries that start, suspend and resume jobs
(:mod:`~berth.service.jobs.gang_slots`), and the checks a request passes before it
becomes a job (:mod:`~berth.service.jobs.checks`). No I/O.
"""
