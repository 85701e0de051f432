"""The runtime shell: console entry points and wiring. Nothing imports this package."""
