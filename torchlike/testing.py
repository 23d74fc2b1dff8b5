"""torchlike.testing: assert_close, and the jax.grad oracle (DESIGN.md §6)."""
