# host-stub/host.mk -- (empty until its part lands)
