// this acts as a general import point for other scripts
// we can then dynamically change here what we actually define so we can gradually upgrade from one version of qlog to another

export * from "./QlogSchema02"
