#include <jvmti.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
/* A JVMTI agent that only adds capabilities and does nothing else, to measure what HotSpot charges
 * for them (BENCHMARKS.md, agent benchmark, quiet results). -agentpath:libcapprobe.so=NAME+NAME...
 * adds the named capabilities (as in jvmti.h), "all" every one a debugger agent asks for. */
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  jvmtiEnv *jvmti; jvmtiCapabilities c, pot; memset(&c,0,sizeof c);
  if ((*vm)->GetEnv(vm,(void**)&jvmti,JVMTI_VERSION_11)) return 1;
  (*jvmti)->GetPotentialCapabilities(jvmti,&pot);
  const char *o = options ? options : "";
#define CAP(n) if (strstr(o,#n) || strstr(o,"all")) c.n = pot.n;
  CAP(can_tag_objects) CAP(can_generate_field_modification_events) CAP(can_generate_field_access_events)
  CAP(can_get_bytecodes) CAP(can_get_synthetic_attribute) CAP(can_get_owned_monitor_info)
  CAP(can_get_current_contended_monitor) CAP(can_get_monitor_info) CAP(can_pop_frame)
  CAP(can_redefine_classes) CAP(can_signal_thread) CAP(can_get_source_file_name) CAP(can_get_line_numbers)
  CAP(can_get_source_debug_extension) CAP(can_access_local_variables) CAP(can_maintain_original_method_order)
  CAP(can_generate_single_step_events) CAP(can_generate_exception_events) CAP(can_generate_frame_pop_events)
  CAP(can_generate_breakpoint_events) CAP(can_suspend) CAP(can_generate_method_entry_events)
  CAP(can_generate_method_exit_events) CAP(can_generate_monitor_events) CAP(can_generate_garbage_collection_events)
  CAP(can_force_early_return) CAP(can_get_owned_monitor_stack_depth_info) CAP(can_get_constant_pool)
  CAP(can_get_thread_cpu_time)
  jvmtiError e = (*jvmti)->AddCapabilities(jvmti,&c);
  if (e) { fprintf(stderr,"AddCapabilities %d\n",e); return 1; }
  return 0;
}
