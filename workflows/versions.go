package workflows

// Change IDs for workflow.GetVersion live here, one constant per change to
// a workflow's logic that running executions must replay around. None yet:
// every workflow is at its first version.
