/* codegen_bench.c -- time cg_emit_ptx on a large generated program (placeholder until the generator lands). */
int main(void) { return 0; }
