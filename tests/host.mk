# tests/host.mk -- (empty until its part lands)
