"""Test helpers: processes, corpora, shared rows and harnesses."""
