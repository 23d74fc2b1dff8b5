"""torchlike.nn.functional: mirrors ``torch.nn.functional``, the stateless maths every layer calls.

Each function is written once, as ops of the op table in ``torchlike/_ops/<family>.py``, and
re-exported here by name, one block per family.
"""
