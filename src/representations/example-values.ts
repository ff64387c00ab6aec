// Values shared by the examples of the OpenAPI document, so the objects of one story (a user, its endpoint, the
// event delivered to it) name each other consistently.
export const USER_ID = "104729361";
export const CREATED_AT = "2026-11-20T09:14:03.512Z";
export const UPDATED_AT = "2026-11-20T09:15:41.208Z";
export const ENDPOINT_ID = "3f0c1c7e-5b8a-4d2e-9f61-2a7d9c4b8e10";
export const EVENT_ID = "evt_8d3b2f0e-61c4-4a7e-9b15-0c2f6e4d7a91";
