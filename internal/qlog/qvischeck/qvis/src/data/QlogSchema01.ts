export * from "@quictools/qlog-schema/draft-01/QLog";
