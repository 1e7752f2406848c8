// SPDX-License-Identifier: GPL-2.0
/*
 * An extension for openipmi's ipmi_sim (loaded by "loadlib" in its LAN
 * configuration): DCMI Get Power Reading (NetFn 0x2C, group extension 0xDC,
 * command 0x02), which ipmi_sim lacks, answering the power in a file, so
 * that the IPMI backend's DCMI path runs over ipmi_sim's real RMCP+
 * transport and session. The option string is the file's path; the file
 * holds the watts ("250"), or "inactive" for a BMC whose power measurement
 * is not active. Any other DCMI command is answered "invalid command".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <OpenIPMI/serv.h>
#include <OpenIPMI/mcserv.h>

#define DCMI_GROUP 0xdc
#define DCMI_GET_POWER_READING 0x02

static char power_file[256];

static void put16(unsigned char *p, unsigned int v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
}

static void dcmi_handler(lmc_data_t *mc, msg_t *msg, unsigned char *rdata,
			 unsigned int *rdata_len, void *cb_data)
{
	char buf[64] = "";
	unsigned int w = 0;
	int active = 0;
	FILE *f;

	(void)mc;
	(void)cb_data;
	if (msg->cmd != DCMI_GET_POWER_READING) {
		rdata[0] = 0xc1; /* invalid command */
		*rdata_len = 1;
		return;
	}
	f = fopen(power_file, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%u", &w) == 1)
			active = 1;
		fclose(f);
	}
	if (!f) {
		rdata[0] = 0xd5; /* cannot be executed now */
		*rdata_len = 1;
		return;
	}
	memset(rdata, 0, 19);
	rdata[0] = 0x00;
	rdata[1] = DCMI_GROUP;
	put16(rdata + 2, w); /* current */
	put16(rdata + 4, w); /* minimum over the period */
	put16(rdata + 6, w); /* maximum */
	put16(rdata + 8, w); /* average */
	/* time stamp (4) and period (4) left 0 */
	rdata[18] = active ? 0x40 : 0x00; /* power measurement active */
	*rdata_len = 19;
}

int ipmi_sim_module_print_version(sys_data_t *sys, char *options)
{
	(void)sys;
	(void)options;
	printf("joules dcmi_ext 1\n");
	return 0;
}

int ipmi_sim_module_init(sys_data_t *sys, const char *options)
{
	(void)sys;
	if (!options || strlen(options) >= sizeof(power_file))
		return -1;
	strcpy(power_file, options);
	ipmi_emu_register_group_extension_handler(DCMI_GROUP, dcmi_handler,
						  NULL);
	return 0;
}
