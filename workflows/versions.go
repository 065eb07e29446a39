package workflows

// Change IDs for workflow.GetVersion live here, one constant per change to
// a workflow's logic that running executions must replay around.
//
// There is none: v0.1.0 is the replay floor, and every execution started
// before it has ended. A change that the recorded histories of a release
// (testdata/releases) cannot replay adds its ID here.
