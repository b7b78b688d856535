"""The league: authors submit their own bots, and every version is stored, built in the sandbox and checked.

A layer above tournaments (see the design notes, "The league"): nothing below it knows about leagues. This package
holds no imports of its own, so each module can be read (and merged) on its own.
"""
