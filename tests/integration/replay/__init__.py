"""Replays the real service's recorded HTTP exchanges against the emulator and compares answers.

cassette   reads vcrpy YAML and Java session records into exchanges
prepare    makes what the recorded tests' preparers made outside the recording
compare    the difference between two answers: status, JSON shape, types, stable values, headers
known      the documented differences from the cloud (emulator/arm/README.md)
player     sends the exchanges in order, polls where the cloud was polled, collects differences
"""
