"""What runs and where: child processes and their tools, the reverse proxies, a hosting mode's
app alone or behind them (modes.py), on loopback, in two network namespaces (netns.py) or on
two hosts over ssh (remote.py, with the helper it copies there)."""
