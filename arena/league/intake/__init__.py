"""Intake: an upload becomes a ready version.

An upload's bytes received within the league's limits (:mod:`.upload`), the hostile archive read into one canonical
archive (:mod:`.archive`), stored by its hash (:mod:`.store`), built by its kit's recipe (:mod:`.kits`,
:mod:`.build`) in the build sandbox and checked (:mod:`.pipeline`); and a new bot folder made from a kit's example
(:mod:`.starter`).
"""
