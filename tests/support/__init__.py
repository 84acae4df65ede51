"""Test-only helpers. Nothing under src/ may import this package."""
