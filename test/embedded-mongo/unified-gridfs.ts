// GridFS for the unified test runner: the bucket entity (the driver's GridFSBucket) and its operations.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { GridFSBucket, type Db, type Document, type ObjectId } from "mongodb";

/** A bucket entity: `{id, database, bucketOptions}` with bucketName, chunkSizeBytes, read/write concern, read preference. */
export function createBucket(db: Db, bucketOptions: Document | undefined): GridFSBucket {
  return new GridFSBucket(db, bucketOptions ?? {});
}

export function isBucket(v: unknown): v is GridFSBucket {
  return v instanceof GridFSBucket;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The upload source: `{$$hexBytes: "..."}` in the unified format. */
function sourceBytes(source: unknown): Buffer {
  const hex = (source as Document | undefined)?.$$hexBytes;
  if (typeof hex !== "string") throw new Error("upload: source must be {$$hexBytes: <string>}");
  return Buffer.from(hex, "hex");
}

/** Runs a bucket operation; undefined when `name` is not one. Arguments other than the named ones are options. */
export async function bucketOperation(bucket: GridFSBucket, name: string, args: Document): Promise<{ result: unknown } | undefined> {
  const { id, filename, source, newFilename, ...options } = args;
  switch (name) {
    case "delete":
      await bucket.delete(id as ObjectId, options);
      return { result: undefined };
    case "download":
      return { result: await readAll(bucket.openDownloadStream(id as ObjectId, options)) };
    case "downloadByName":
      return { result: await readAll(bucket.openDownloadStreamByName(filename as string, options)) };
    case "upload": {
      const upload = bucket.openUploadStream(filename as string, options);
      await pipeline(Readable.from([sourceBytes(source)]), upload);
      return { result: upload.id };
    }
    case "rename":
      await bucket.rename(id as ObjectId, newFilename as string, options);
      return { result: undefined };
    case "drop":
      await bucket.drop(options);
      return { result: undefined };
    default:
      return undefined;
  }
}
