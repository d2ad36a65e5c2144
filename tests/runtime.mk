# tests/runtime.mk -- (empty until its part lands)
