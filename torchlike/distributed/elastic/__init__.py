"""Mirrors ``torch.distributed.elastic``: what the launcher (``python -m
torchlike.distributed.run``) is built from -- starting and watching worker processes
(``multiprocessing``) and reporting a worker's failure (``multiprocessing.errors``).  The
rendezvous is static (NOTE [ static rendezvous ] in torchlike/distributed/launcher/api.py)."""
