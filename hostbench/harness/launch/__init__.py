"""What runs and where: child processes and their tools, the programs a hosting mode starts,
each declared once (programs.py: the test app, the Go servers, the proxies, from the configs
proxies.py writes), a mode's programs launched alike (modes.py) through a place: this machine's
loopback or one of two network namespaces (places.py, netns.py), or an ssh host (remote.py,
with the helper it copies there)."""
