"""What runs and where: child processes and their tools, the programs a hosting mode starts
(each declared once in hostbench/programs: the test app, the Go servers, the proxies)
launched alike (modes.py) through a place: this machine's loopback or one of two network
namespaces (places.py, netns.py), or an ssh host (remote.py: its connection, with the hosts
from inventory.py, the helper it copies there serving over helper_session.py, and what runs
there in remote_process.py)."""
