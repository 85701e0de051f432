"""The pure scheduling core: resources, availability profile, jobs, decisions, policies.

Nothing in this package reads a clock, does I/O, logs or draws random numbers: time is
an ``int`` (seconds) passed in by the caller, and expected outcomes (a rejected job, a
job that cannot be placed) are returned as values carrying a reason. The daemon and the
emulator drive exactly the same objects.
"""
