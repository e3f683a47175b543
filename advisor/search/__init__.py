"""The parent side of a sweep: the space, the priors and the plan that order it, the fleet of
workers, the launcher that starts each trial in its own process, resume, and the parent half of
the leaders' confirmation. Never imports torch, nor `advisor.child` (it starts it as a process)."""
