"""The loops ``arena bench env`` measures, in a module of their own that imports nothing: ``arena bench env
--help`` lists them without loading the benchmark (numpy, the environments)."""

FRAMEWORKS = ("engine", "pettingzoo", "pettingzoo_raw", "openspiel", "openspiel_tensor")
