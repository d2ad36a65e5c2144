/* model_names.h -- model.c's private copy of the algorithm and its primitives: every external name of dsl.c and algo.c renamed, so one translation unit can inline them all. */
#ifndef VYRE_PLUGIN_PTXMATH_MODEL_NAMES_H
#define VYRE_PLUGIN_PTXMATH_MODEL_NAMES_H

#define pm_algo_has pm_model_algo_has
#define pm_algo_run pm_model_algo_run
#define pm_bits_of_d pm_model_bits_of_d
#define pm_d_of_bits pm_model_d_of_bits
#define pm_d_of_f32bits pm_model_d_of_f32bits
#define pm_d_of_s32 pm_model_d_of_s32
#define pm_d_of_s64 pm_model_d_of_s64
#define pm_d_of_u64 pm_model_d_of_u64
#define pm_dabs pm_model_dabs
#define pm_dadd pm_model_dadd
#define pm_ddiv pm_model_ddiv
#define pm_dfma pm_model_dfma
#define pm_dimm pm_model_dimm
#define pm_dmul pm_model_dmul
#define pm_dneg pm_model_dneg
#define pm_drint pm_model_drint
#define pm_dsel pm_model_dsel
#define pm_dsqrt pm_model_dsqrt
#define pm_dsub pm_model_dsub
#define pm_ex2_approx pm_model_ex2_approx
#define pm_f32bits_of_d pm_model_f32bits_of_d
#define pm_input pm_model_input
#define pm_label pm_model_label
#define pm_output pm_model_output
#define pm_pand pm_model_pand
#define pm_pnot pm_model_pnot
#define pm_por pm_model_por
#define pm_rsqrt_approx pm_model_rsqrt_approx
#define pm_s32_of_d_rni pm_model_s32_of_d_rni
#define pm_setp_d pm_model_setp_d
#define pm_setp_u pm_model_setp_u
#define pm_setp_w pm_model_setp_w
#define pm_skip_if pm_model_skip_if
#define pm_u_of_w pm_model_u_of_w
#define pm_uadd pm_model_uadd
#define pm_uand pm_model_uand
#define pm_uimm pm_model_uimm
#define pm_umul_hi pm_model_umul_hi
#define pm_umul_lo pm_model_umul_lo
#define pm_uor pm_model_uor
#define pm_usel pm_model_usel
#define pm_ushl pm_model_ushl
#define pm_ushr pm_model_ushr
#define pm_usub pm_model_usub
#define pm_w_of_u pm_model_w_of_u
#define pm_wadd pm_model_wadd
#define pm_wand pm_model_wand
#define pm_wimm pm_model_wimm
#define pm_wor pm_model_wor
#define pm_wsel pm_model_wsel
#define pm_wshl pm_model_wshl
#define pm_wshr pm_model_wshr
#define pm_wsub pm_model_wsub
#define pm_wxor pm_model_wxor

#endif /* VYRE_PLUGIN_PTXMATH_MODEL_NAMES_H */
