"""The node agent: runs jobs' commands on one node for a Berth daemon.

:mod:`berth.agent.shepherd` watches one job in its own session and process group,
enforces its time limit and writes its exit status to disk; :mod:`berth.agent.jobs`
keeps the job directories (launch, adopt after a restart, signal, acknowledge);
:mod:`berth.agent.agent` registers with the daemon and keeps the level-triggered sync.
The agent uses only the standard library: it must start anywhere a python3 runs, and
never loads the daemon's stack.
"""
