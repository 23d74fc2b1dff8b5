"""The op table: one file per family, each op written once as a jnp function."""
