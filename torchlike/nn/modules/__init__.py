"""The layers of torchlike.nn, one file per family (each thin over nn.functional)."""
