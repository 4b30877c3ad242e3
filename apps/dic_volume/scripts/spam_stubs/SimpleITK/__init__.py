"""Stand-in for SimpleITK on the GPU machine: spam imports it at start-up, but its local DIC (spam.DIC.ldic),
the only part the dvc benchmark runs, never calls it. The real wheel is far above the carry budget."""


def __getattr__(name):
    raise ImportError("SimpleITK is a stand-in on this machine (apps/dic_volume/scripts/spam_stubs); spam.DIC.ldic does not need it")
