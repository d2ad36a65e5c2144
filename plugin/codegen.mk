# plugin/codegen.mk -- (empty until its part lands)
