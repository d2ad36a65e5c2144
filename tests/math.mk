# tests/math.mk -- (empty until its part lands)
