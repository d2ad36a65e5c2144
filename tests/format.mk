# tests/format.mk -- (empty until its part lands)
