// Public entry point of the embedded MongoDB-wire-compatible server (development and tests only; production
// runs on a real MongoDB given by MONGODB_URI).
export { startEmbeddedMongo, type EmbeddedMongo, type EmbeddedMongoOptions } from "./server/server.ts";
